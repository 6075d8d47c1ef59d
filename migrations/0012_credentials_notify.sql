-- A revoked tenant credential (vcluster_credentials.revoke_time set) is told
-- on channel septa_credentials with payload "<tenant>/<vcluster>/<serial>" to
-- every septad replica, so the virtual clusters' API servers can refuse the
-- certificate at once rather than at their next read of the table.
-- Only the first revocation is told: revoking again keeps the first time and
-- changes nothing (services/core/credential_service.h).
CREATE FUNCTION septa_notify_credentials() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('septa_credentials', NEW.tenant || '/' || NEW.vcluster || '/' || NEW.serial);
  RETURN NEW;
END;
$$;

CREATE TRIGGER vcluster_credentials_revoke_notify
  AFTER UPDATE OF revoke_time ON vcluster_credentials
  FOR EACH ROW WHEN (OLD.revoke_time IS NULL AND NEW.revoke_time IS NOT NULL)
  EXECUTE FUNCTION septa_notify_credentials();
