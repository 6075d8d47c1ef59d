// septa-kubesim: runs one simulated Kubernetes cluster until SIGINT/SIGTERM.
//   septa-kubesim --inventory nodes.yaml --listen 127.0.0.1:6443 --kubeconfig-out ./kubeconfig
#include <CLI/CLI.hpp>
#include <csignal>
#include <fstream>
#include <iostream>

#include "services/base/file.h"
#include "services/kubesim/kubesim.h"

int main(int argc, char** argv) {
  CLI::App app{"septa-kubesim: a Kubernetes API server with simulated GPU nodes (development and tests only)"};
  septa::kubesim::KubeSimOptions options;
  std::string kubeconfig_out, inventory;
  app.add_option("--listen", options.listen, "HTTPS address, host:port (port 0: any free port)")->capture_default_str();
  app.add_option("--insecure-listen", options.insecure_listen, "also serve plain HTTP on this loopback host:port");
  app.add_option("--kubeconfig-out", kubeconfig_out, "write an admin kubeconfig (with the cluster CA) here");
  app.add_option("--inventory", inventory, "simulated nodes (YAML)");
  app.add_option("--name", options.cluster_name, "cluster name used in the kubeconfig")->capture_default_str();
  app.add_option("--io-threads", options.io_threads, "HTTP I/O threads")->capture_default_str();
  bool no_scheduler_crds = false;
  app.add_flag("--no-scheduler-crds", no_scheduler_crds,
               "do not install the CRDs of KAI-Scheduler (Queue, PodGroup) and Kueue (ResourceFlavor, ClusterQueue, "
               "LocalQueue, Workload)");
  std::vector<std::string> schedulers;
  app.add_option("--scheduler-name", schedulers,
                 "schedulerName values the simulated scheduler serves (default: default-scheduler)");
  long pod_start_ms = options.nodes.pod_start_delay.count(), mig_ms = options.nodes.mig_reconfigure_delay.count();
  app.add_option("--pod-start-delay-ms", pod_start_ms, "bound pods turn Running after this")->capture_default_str();
  app.add_option("--mig-delay-ms", mig_ms, "MIG reconfiguration takes this long")->capture_default_str();
  std::string dcgm_version, dcgm_mapping = "last-pod-wins";
  app.add_option("--dcgm-exporter", dcgm_version,
                 "serve a simulated dcgm-exporter of this version (4.8.2, 4.8.3, 4.9) on every GPU node, its pod in "
                 "gpu-operator (docs/kubesim.md)");
  app.add_option("--dcgm-mapping", dcgm_mapping, "its pod labels: off, last-pod-wins or virtual-gpus")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (!dcgm_version.empty()) {
    auto version = septa::kubesim::ParseDcgmExporterVersion(dcgm_version);
    auto mapping = septa::kubesim::ParseDcgmPodMapping(dcgm_mapping);
    for (const septa::Status& st : {version.status(), mapping.status()}) {
      if (!st.ok()) {
        std::cerr << "septa-kubesim: " << st.message() << "\n";
        return 2;
      }
    }
    septa::kubesim::DcgmSimOptions dcgm;
    dcgm.profile.version = *version;
    dcgm.profile.mapping = *mapping;
    options.dcgm = dcgm;
  }
  options.scheduler_crds = !no_scheduler_crds;
  if (!schedulers.empty()) options.nodes.scheduler_names = {schedulers.begin(), schedulers.end()};
  options.nodes.pod_start_delay = std::chrono::milliseconds(pod_start_ms);
  options.nodes.mig_reconfigure_delay = std::chrono::milliseconds(mig_ms);
  if (!inventory.empty()) {
    auto text = septa::base::ReadFile(inventory);
    if (!text.ok()) {
      std::cerr << "septa-kubesim: " << text.status().message() << "\n";
      return 1;
    }
    auto parsed = septa::kubesim::ParseInventory(*text, inventory);
    if (!parsed.ok()) {
      std::cerr << "septa-kubesim: " << parsed.status().ToString() << "\n";
      return 1;
    }
    options.inventory = std::move(*parsed);
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts

  // Every RBAC denial, as an API server's audit log has it: a test counts the
  // 403s a client met whether or not the client logs them.
  options.api.on_forbidden = [](const std::string& message) {
    std::cerr << "septa-kubesim: 403 Forbidden: " << message << std::endl;
  };
  septa::kubesim::KubeSim sim(options);
  if (auto st = sim.Start(); !st.ok()) {
    std::cerr << "septa-kubesim: " << st.ToString() << "\n";
    return 1;
  }
  if (!kubeconfig_out.empty()) {
    auto config = sim.AdminKubeconfig();
    if (!config.ok()) {
      std::cerr << "septa-kubesim: " << config.status().ToString() << "\n";
      return 1;
    }
    std::string tmp = kubeconfig_out + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << *config;
      if (!out) {
        std::cerr << "septa-kubesim: cannot write " << tmp << "\n";
        return 1;
      }
    }
    std::rename(tmp.c_str(), kubeconfig_out.c_str());  // readers never see half a file
  }
  std::cout << "septa-kubesim: serving " << sim.server_url();
  if (sim.http_port() != 0) std::cout << " and http://127.0.0.1:" << sim.http_port();
  std::cout << std::endl;
  if (septa::kubesim::DcgmExporters* exporters = sim.dcgm_exporters()) {
    for (const auto& node : options.inventory ? options.inventory->nodes : std::vector<septa::kubesim::NodeSpec>{}) {
      if (exporters->port(node.name) == 0) continue;
      std::cout << "septa-kubesim: dcgm-exporter of " << node.name << " at " << exporters->MetricsUrl(node.name)
                << std::endl;
    }
  }

  int sig = 0;
  sigwait(&signals, &sig);
  sim.Stop();
  return 0;
}
