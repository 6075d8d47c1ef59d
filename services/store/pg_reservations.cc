#include <nlohmann/json.hpp>

#include "services/store/pg_capacity.h"
#include "services/store/pg_capacity_values.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::store {
namespace {

using nlohmann::json;
using tenancy::Reservation;

// A reservation with its rows of each kind as JSON arrays, in key order, so
// that one statement reads a whole reservation.
constexpr char kReservationColumns[] =
    "r.tenant, r.vcluster, r.tier, r.releasing,"
    " (SELECT coalesce(jsonb_agg(jsonb_build_array(s.node, s.gpu, s.milli_gpu, s.gpu_memory_mib)"
    " ORDER BY s.node, s.gpu), '[]') FROM reservation_shares s WHERE s.tenant = r.tenant AND s.vcluster = r.vcluster)"
    "::text,"
    " (SELECT coalesce(jsonb_agg(jsonb_build_array(m.node, m.gpu, m.profile, m.start, m.size)"
    " ORDER BY m.node, m.gpu, m.start), '[]') FROM reservation_mig m"
    " WHERE m.tenant = r.tenant AND m.vcluster = r.vcluster)::text,"
    " (SELECT coalesce(jsonb_agg(jsonb_build_array(g.node, g.gpu) ORDER BY g.node, g.gpu), '[]')"
    " FROM reservation_gpus g WHERE g.tenant = r.tenant AND g.vcluster = r.vcluster)::text,"
    " (SELECT coalesce(jsonb_agg(n.node ORDER BY n.node), '[]') FROM reservation_nodes n"
    " WHERE n.tenant = r.tenant AND n.vcluster = r.vcluster)::text";

Reservation ReservationOf(const pqxx::row& r) {
  Reservation reservation;
  reservation.tenant = r[0].as<std::string>();
  reservation.vcluster = r[1].as<std::string>();
  reservation.tier = TierOf(r[2].as<std::string>());
  reservation.releasing = r[3].as<bool>();
  for (const auto& s : json::parse(r[4].as<std::string>())) {
    reservation.shares.push_back(
        {s.at(0).get<std::string>(), s.at(1).get<int>(), s.at(2).get<int>(), s.at(3).get<std::int64_t>()});
  }
  for (const auto& m : json::parse(r[5].as<std::string>())) {
    reservation.mig.push_back({m.at(0).get<std::string>(), m.at(1).get<int>(), m.at(2).get<std::string>(),
                               m.at(3).get<int>(), m.at(4).get<int>()});
  }
  for (const auto& g : json::parse(r[6].as<std::string>())) {
    reservation.gpus.push_back({g.at(0).get<std::string>(), g.at(1).get<int>()});
  }
  for (const auto& n : json::parse(r[7].as<std::string>())) reservation.nodes.push_back(n.get<std::string>());
  return reservation;
}

// The insert statements take each kind's rows as one JSON array.
std::string SharesJson(const Reservation& r) {
  json rows = json::array();
  for (const auto& s : r.shares) {
    rows.push_back(
        {{"node", s.node}, {"gpu", s.gpu}, {"milli_gpu", s.milli_gpu}, {"gpu_memory_mib", s.gpu_memory_mib}});
  }
  return rows.dump();
}
std::string MigJson(const Reservation& r) {
  json rows = json::array();
  for (const auto& m : r.mig) {
    rows.push_back({{"node", m.node}, {"gpu", m.gpu}, {"profile", m.profile}, {"start", m.start}, {"size", m.slices}});
  }
  return rows.dump();
}
std::string GpusJson(const Reservation& r) {
  json rows = json::array();
  for (const auto& g : r.gpus) rows.push_back({{"node", g.node}, {"gpu", g.gpu}});
  return rows.dump();
}

std::string ReservationNameOf(const std::string& tenant, const std::string& vcluster) {
  return "reservation of virtual cluster \"" + tenancy::VirtualClusterText(tenant, vcluster) + "\"";
}

}  // namespace

void PgReservations::Prepare(pqxx::connection& c) {
  const std::string columns = kReservationColumns;
  c.prepare("reservation_get", "SELECT " + columns + " FROM reservations r WHERE r.tenant = $1 AND r.vcluster = $2");
  c.prepare("reservation_list", "SELECT " + columns + " FROM reservations r ORDER BY r.tenant, r.vcluster");
  c.prepare("reservation_list_on_node", "SELECT " + columns +
                                            " FROM reservations r WHERE (r.tenant, r.vcluster) IN ("
                                            " SELECT tenant, vcluster FROM reservation_shares WHERE node = $1"
                                            " UNION SELECT tenant, vcluster FROM reservation_mig WHERE node = $1"
                                            " UNION SELECT tenant, vcluster FROM reservation_gpus WHERE node = $1"
                                            " UNION SELECT tenant, vcluster FROM reservation_nodes WHERE node = $1)"
                                            " ORDER BY r.tenant, r.vcluster");
  c.prepare("capacity_epoch", "SELECT epoch FROM capacity_epoch");
  c.prepare("reservation_insert",
            "INSERT INTO reservations (tenant, vcluster, tier, releasing) VALUES ($1, $2, $3, $4)");
  // The rows' triggers take the holds that refuse double booking
  // (migrations/0003_capacity.sql); the order of kinds here is the order in
  // which a reservation with rows of several kinds (a bad one) is refused.
  c.prepare("reservation_insert_nodes",
            "INSERT INTO reservation_nodes (tenant, vcluster, node)"
            " SELECT $1, $2, n FROM jsonb_array_elements_text($3::jsonb) AS n");
  c.prepare("reservation_insert_gpus",
            "INSERT INTO reservation_gpus (tenant, vcluster, node, gpu)"
            " SELECT $1, $2, g.node, g.gpu FROM jsonb_to_recordset($3::jsonb) AS g (node text, gpu integer)");
  c.prepare("reservation_insert_mig",
            "INSERT INTO reservation_mig (tenant, vcluster, node, gpu, profile, start, size)"
            " SELECT $1, $2, m.node, m.gpu, m.profile, m.start, m.size FROM jsonb_to_recordset($3::jsonb)"
            " AS m (node text, gpu integer, profile text, start integer, size integer)");
  c.prepare("reservation_insert_shares",
            "INSERT INTO reservation_shares (tenant, vcluster, node, gpu, milli_gpu, gpu_memory_mib)"
            " SELECT $1, $2, s.node, s.gpu, s.milli_gpu, s.gpu_memory_mib FROM jsonb_to_recordset($3::jsonb)"
            " AS s (node text, gpu integer, milli_gpu integer, gpu_memory_mib bigint)");
  // The rows go with the reservation (ON DELETE CASCADE), releasing their holds.
  c.prepare("reservation_delete", "DELETE FROM reservations WHERE tenant = $1 AND vcluster = $2");
  c.prepare("reservation_mark_releasing",
            "UPDATE reservations SET releasing = true WHERE tenant = $1 AND vcluster = $2");
}

Status PgReservations::Insert(const Reservation& r) {
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    pqxx::result header =
        w.exec_prepared("reservation_insert", r.tenant, r.vcluster, std::string(gpu::TierName(r.tier)), r.releasing);
    if (!r.nodes.empty()) w.exec_prepared("reservation_insert_nodes", r.tenant, r.vcluster, json(r.nodes).dump());
    if (!r.gpus.empty()) w.exec_prepared("reservation_insert_gpus", r.tenant, r.vcluster, GpusJson(r));
    if (!r.mig.empty()) w.exec_prepared("reservation_insert_mig", r.tenant, r.vcluster, MigJson(r));
    if (!r.shares.empty()) w.exec_prepared("reservation_insert_shares", r.tenant, r.vcluster, SharesJson(r));
    return header;
  }));
}

Status PgReservations::Delete(const std::string& tenant, const std::string& vcluster) {
  return ToStatus(
      work_.Write([&](pqxx::transaction_base& w) { return w.exec_prepared("reservation_delete", tenant, vcluster); }));
}

Status PgReservations::MarkReleasing(const std::string& tenant, const std::string& vcluster) {
  auto marked = work_.Write(
      [&](pqxx::transaction_base& w) { return w.exec_prepared("reservation_mark_releasing", tenant, vcluster); });
  if (!marked.ok()) return marked.status();
  return *marked == 1 ? Status::Ok() : NotFound(ReservationNameOf(tenant, vcluster) + " not found");
}

Result<Reservation> PgReservations::Get(const std::string& tenant, const std::string& vcluster) {
  return work_.Read<Reservation>([&](pqxx::transaction_base& t) -> Result<Reservation> {
    const auto rows = t.exec_prepared("reservation_get", tenant, vcluster);
    if (rows.empty()) return NotFound(ReservationNameOf(tenant, vcluster) + " not found");
    return ReservationOf(rows[0]);
  });
}

Result<std::vector<Reservation>> PgReservations::ListOnNode(const std::string& node) {
  return work_.Read<std::vector<Reservation>>([&](pqxx::transaction_base& t) {
    std::vector<Reservation> reservations;
    for (const auto& row : t.exec_prepared("reservation_list_on_node", node)) {
      reservations.push_back(ReservationOf(row));
    }
    return reservations;
  });
}

Result<std::vector<Reservation>> PgReservations::List() {
  return work_.Read<std::vector<Reservation>>([&](pqxx::transaction_base& t) {
    std::vector<Reservation> reservations;
    for (const auto& row : t.exec_prepared("reservation_list")) reservations.push_back(ReservationOf(row));
    return reservations;
  });
}

Result<std::int64_t> PgReservations::Epoch() {
  return work_.Read<std::int64_t>([&](pqxx::transaction_base& t) -> Result<std::int64_t> {
    const auto rows = t.exec_prepared("capacity_epoch");
    if (rows.empty()) return Internal("the capacity epoch row is missing");
    return rows[0][0].as<std::int64_t>();
  });
}

}  // namespace septa::store
