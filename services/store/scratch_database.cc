#include "services/store/scratch_database.h"

#include <unistd.h>

#include <system_error>

#include "services/store/migration_runner.h"

namespace septa::store {

Result<std::unique_ptr<ScratchDatabase>> ScratchDatabase::Open(std::string url, const std::string& name, bool durable) {
  std::unique_ptr<ScratchDatabase> db(new ScratchDatabase());
  if (url.empty()) {
    db->root_ = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
    auto started = EmbeddedPostgres::Start({.root = db->root_, .durable = durable});
    if (!started.ok()) return Status(started.status().code(), "starting PostgreSQL: " + started.status().message());
    db->postgres_ = *std::move(started);
    url = db->postgres_->url();
  }
  db->url_ = std::move(url);
  auto migrations = EmbeddedMigrations();
  if (!migrations.ok()) return migrations.status();
  db->migrations_ = *std::move(migrations);
  if (auto applied = MigrationRunner(db->migrations_).Apply(db->url_); !applied.ok()) {
    return Status(applied.status().code(), "migrating: " + applied.status().message());
  }
  return db;
}

ScratchDatabase::~ScratchDatabase() {
  if (postgres_ == nullptr) return;
  (void)postgres_->Stop();
  postgres_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

}  // namespace septa::store
