#include "gpu/openb_csv.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace septa::gpu {
namespace {

// A CSV table without quoting (the openb files have none), read row by row.
class CsvReader {
 public:
  CsvReader(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  // Reads the header and checks the required columns are present.
  Status ReadHeader(const std::vector<std::string_view>& required) {
    if (!NextRow()) return Error(1, 0, "", "empty file, a header is required");
    header_ = fields_;
    for (std::string_view column : required) {
      if (std::find(header_.begin(), header_.end(), column) == header_.end()) {
        return Error(line_, 0, column, "missing column");
      }
    }
    return Status::Ok();
  }

  // Advances to the next non-empty row; false at the end.
  bool NextRow() {
    while (pos_ < text_.size()) {
      const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
      std::string_view line = text_.substr(pos_, end - pos_);
      pos_ = end + 1;
      ++line_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) continue;
      fields_.clear();
      std::size_t start = 0;
      while (true) {
        const std::size_t comma = line.find(',', start);
        fields_.push_back(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      return true;
    }
    return false;
  }

  std::optional<std::string_view> Field(std::string_view column) const {
    const int c = ColumnIndex(column);
    if (c < 0 || c >= static_cast<int>(fields_.size())) return std::nullopt;
    return fields_[c];
  }

  Status Text(std::string_view column, std::string& out) const {
    const std::optional<std::string_view> f = Field(column);
    if (!f) return Error(line_, ColumnIndex(column) + 1, column, "missing value (row too short)");
    out = std::string(*f);
    return Status::Ok();
  }

  Status Int(std::string_view column, int min, int max, int& out) const {
    const std::optional<std::string_view> f = Field(column);
    const int col = ColumnIndex(column) + 1;
    if (!f) return Error(line_, col, column, "missing value (row too short)");
    const auto [end, ec] = std::from_chars(f->data(), f->data() + f->size(), out);
    if (f->empty() || ec != std::errc() || end != f->data() + f->size()) {
      return Error(line_, col, column, "'" + std::string(*f) + "' is not an integer");
    }
    if (out < min || out > max) {
      return Error(line_, col, column,
                   std::to_string(out) + " is out of range " + std::to_string(min) + ".." + std::to_string(max));
    }
    return Status::Ok();
  }

  // A model name that must be in the catalog (the openb names are canonical).
  Status Model(std::string_view column, std::string_view value, const Catalog& catalog) const {
    if (catalog.Find(value)) return Status::Ok();
    return Error(line_, ColumnIndex(column) + 1, column, "unknown GPU model '" + std::string(value) + "'");
  }

  Status Error(int line, int column, std::string_view column_name, const std::string& message) const {
    std::string where = std::string(source_) + ":" + std::to_string(line);
    if (column > 0) where += ":" + std::to_string(column);
    return InvalidField(std::string(column_name), where + ": " + message);
  }

  // An error in the current row, at `column`.
  Status ErrorIn(std::string_view column, const std::string& message) const {
    return Error(line_, ColumnIndex(column) + 1, column, message);
  }

 private:
  int ColumnIndex(std::string_view column) const {
    auto it = std::find(header_.begin(), header_.end(), column);
    return it == header_.end() ? -1 : static_cast<int>(it - header_.begin());
  }

  std::string_view text_;
  std::string_view source_;
  std::size_t pos_ = 0;
  int line_ = 0;
  std::vector<std::string_view> header_;
  std::vector<std::string_view> fields_;
};

constexpr int kMaxInt = 1 << 30;

}  // namespace

Result<std::vector<OpenbNode>> ParseOpenbNodes(std::string_view text, std::string_view source, const Catalog& catalog) {
  CsvReader csv(text, source);
  SEPTA_RETURN_IF_ERROR(csv.ReadHeader({"sn", "cpu_milli", "memory_mib", "gpu", "model"}));
  std::vector<OpenbNode> nodes;
  while (csv.NextRow()) {
    OpenbNode n;
    SEPTA_RETURN_IF_ERROR(csv.Text("sn", n.name));
    SEPTA_RETURN_IF_ERROR(csv.Int("cpu_milli", 0, kMaxInt, n.cpu_milli));
    SEPTA_RETURN_IF_ERROR(csv.Int("memory_mib", 0, kMaxInt, n.memory_mib));
    SEPTA_RETURN_IF_ERROR(csv.Int("gpu", 0, 8, n.gpu_count));
    SEPTA_RETURN_IF_ERROR(csv.Text("model", n.model));
    if (n.name.empty()) return csv.ErrorIn("sn", "empty node name");
    if (n.gpu_count > 0 || !n.model.empty()) SEPTA_RETURN_IF_ERROR(csv.Model("model", n.model, catalog));
    nodes.push_back(std::move(n));
  }
  return nodes;
}

Result<std::vector<OpenbPod>> ParseOpenbPods(std::string_view text, std::string_view source, const Catalog& catalog) {
  CsvReader csv(text, source);
  SEPTA_RETURN_IF_ERROR(csv.ReadHeader({"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}));
  std::vector<OpenbPod> pods;
  while (csv.NextRow()) {
    OpenbPod p;
    SEPTA_RETURN_IF_ERROR(csv.Text("name", p.name));
    SEPTA_RETURN_IF_ERROR(csv.Int("cpu_milli", 0, kMaxInt, p.cpu_milli));
    SEPTA_RETURN_IF_ERROR(csv.Int("memory_mib", 0, kMaxInt, p.memory_mib));
    SEPTA_RETURN_IF_ERROR(csv.Int("num_gpu", 0, 8, p.num_gpu));
    SEPTA_RETURN_IF_ERROR(csv.Int("gpu_milli", 0, 1000, p.gpu_milli));
    if (p.num_gpu > 1 && p.gpu_milli != 1000) {
      return csv.ErrorIn("gpu_milli", "a multi-GPU pod must ask for 1000 milli per GPU");
    }
    if (p.num_gpu == 1 && p.gpu_milli == 0) {
      return csv.ErrorIn("gpu_milli", "a GPU pod must ask for more than 0 milli");
    }
    if (p.num_gpu == 0) p.gpu_milli = 0;  // CPU-only pods take no GPU whatever the column says
    if (const std::optional<std::string_view> spec = csv.Field("gpu_spec"); spec && !spec->empty()) {
      std::size_t start = 0;
      while (start <= spec->size()) {
        const std::size_t bar = std::min(spec->find('|', start), spec->size());
        const std::string_view model = spec->substr(start, bar - start);
        SEPTA_RETURN_IF_ERROR(csv.Model("gpu_spec", model, catalog));
        p.gpu_spec.emplace_back(model);
        start = bar + 1;
      }
    }
    pods.push_back(std::move(p));
  }
  return pods;
}

}  // namespace septa::gpu
