-- A tenant's suspension or resumption (docs/ARCHITECTURE.md "Suspension"),
-- told to whoever acts on it, on every replica, only if the transaction
-- commits:
-- * on septa_vclusters, once per virtual cluster of the tenant, as a change
--   of its row would be: the provisioner stops or brings back its host
--   workloads, the syncer stops or resumes copying its pods;
-- * on septa_revocations as "principal:tenant:<name>" (the payload of
--   services/store/revocation_listener.h): every replica drops the tenant's
--   tokens from its cache and reads their tenant's state at the next request.
-- A listener that was not connected resyncs or starts its cache over instead.
CREATE FUNCTION septa_notify_tenant_state() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  vcluster text;
BEGIN
  FOR vcluster IN SELECT name FROM virtual_clusters WHERE tenant = NEW.name LOOP
    PERFORM pg_notify('septa_vclusters', NEW.name || '/' || vcluster);
  END LOOP;
  PERFORM pg_notify('septa_revocations', 'principal:tenant:' || NEW.name);
  RETURN NEW;
END;
$$;

CREATE TRIGGER tenants_state_notify
  AFTER UPDATE OF state ON tenants
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
  EXECUTE FUNCTION septa_notify_tenant_state();
