// septad: Septa's server. All wiring lives in services/app; this shell reads
// the configuration, sets up logging, and waits for SIGINT/SIGTERM.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdlib>
#include <iostream>

#include "common/duration.h"
#include "services/app/septad_app.h"
#include "services/base/file.h"
#include "services/base/json_log.h"

extern char** environ;

namespace {

std::map<std::string, std::string> Environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    const std::size_t eq = entry.find('=');
    if (eq != std::string::npos && entry.starts_with("SEPTA_")) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

spdlog::level::level_enum SpdlogLevel(septa::config::LogLevel level) {
  using septa::config::LogLevel;
  switch (level) {
    case LogLevel::kTrace: return spdlog::level::trace;
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
  }
  return spdlog::level::info;
}

void SetUpLogging(const septa::config::Config& config) {
  auto logger = spdlog::stderr_color_mt("septad");
  switch (config.log_format) {
    case septa::config::LogFormat::kJson: logger->set_formatter(septa::base::JsonLineFormatter()); break;
    case septa::config::LogFormat::kText: logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v"); break;
  }
  spdlog::set_default_logger(logger);
  spdlog::set_level(SpdlogLevel(config.log_level));
}

int WaitForSignal() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  int signal = 0;
  sigwait(&signals, &signal);
  return signal;
}

}  // namespace

int main(int argc, char** argv) {
  // Block the stop signals in every thread; the main thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  CLI::App cli{"septad: the Septa control plane server"};
  std::string config_file;
  cli.add_option("--config", config_file, "YAML configuration file")->check(CLI::ExistingFile);
  std::map<std::string, std::string> flags;
  for (const auto& key : septa::config::Keys()) {
    std::string flag = key.key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    cli.add_option_function<std::string>(
        "--" + flag, [&flags, k = key.key](const std::string& v) { flags[k] = v; },
        key.help + " (env " + septa::config::EnvName(key.key) + ")");
  }
  CLI11_PARSE(cli, argc, argv);

  septa::config::Sources sources;
  sources.env = Environment();
  sources.flags = flags;
  if (!config_file.empty()) {
    auto text = septa::base::ReadFile(config_file);
    if (!text.ok()) {
      std::cerr << "septad: invalid configuration: --config: " << text.status().message() << "\n";
      return 2;
    }
    sources.yaml_text = *std::move(text);
    sources.yaml_name = config_file;
  }
  const char* home = std::getenv("HOME");
  auto config = septa::config::Load(sources, home ? home : "");
  if (!config.ok()) {
    std::cerr << "septad: invalid configuration: " << config.status().message() << "\n";
    return 2;
  }
  SetUpLogging(*config);

  const auto started = std::chrono::steady_clock::now();
  auto app = septa::app::SeptadApp::Start(*config);
  if (!app.ok()) {
    spdlog::critical("septad cannot start: {}", app.status().ToString());
    return 1;
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  const std::string host = config->http_addr.substr(0, config->http_addr.rfind(':'));
  spdlog::info("septad ready in {} ms: REST {}://{}:{} gRPC {}:{}{} database {}", ms, (*app)->tls() ? "https" : "http",
               host, (*app)->http_port(), config->grpc_addr.substr(0, config->grpc_addr.rfind(':')),
               (*app)->grpc_port(), (*app)->tls() ? " (TLS)" : "", (*app)->database_description());
  if (const auto& token = (*app)->new_admin_token()) {
    std::cout << "\nBootstrap admin token (shown once; also in " << (*app)->admin_token_path() << "; valid for "
              << septa::FormatDuration(std::chrono::duration_cast<std::chrono::seconds>(config->bootstrap_admin_ttl))
              << ": create lasting admin tokens with it):\n  " << *token << "\n\n"
              << std::flush;
  }

  const int signal = WaitForSignal();
  spdlog::info("received {}, draining for up to {} ms", signal == SIGTERM ? "SIGTERM" : "SIGINT",
               config->shutdown_grace.count());
  (*app)->Shutdown(config->shutdown_grace);
  spdlog::info("septad stopped");
  return 0;
}
