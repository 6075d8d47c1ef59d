-- The provisioner's trigger: every committed change to a virtual cluster
-- row is told on channel septa_vclusters with payload "<tenant>/<name>"
-- (services/reconcile/provisioner_controller.h), to every septad replica.
-- NOTIFY is sent only if the transaction commits; a listener that was not
-- connected resyncs instead.
CREATE FUNCTION septa_notify_vcluster() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('septa_vclusters', OLD.tenant || '/' || OLD.name);
    RETURN OLD;
  END IF;
  PERFORM pg_notify('septa_vclusters', NEW.tenant || '/' || NEW.name);
  RETURN NEW;
END;
$$;

CREATE TRIGGER virtual_clusters_notify
  AFTER INSERT OR UPDATE OR DELETE ON virtual_clusters
  FOR EACH ROW EXECUTE FUNCTION septa_notify_vcluster();
