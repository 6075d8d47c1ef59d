-- Every committed write to a virtual cluster's objects moves its control
-- plane's resource version (services/core/virtual_object_store.h): told on
-- channel septa_virtual_objects with payload "<tenant>/<vcluster>" to every
-- septad replica, whose loaded copy of that virtual cluster then refreshes
-- so that its watchers see the write (services/vcp/simulated_control_planes.h).
CREATE FUNCTION septa_notify_virtual_objects() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('septa_virtual_objects', NEW.tenant || '/' || NEW.vcluster);
  RETURN NEW;
END;
$$;

CREATE TRIGGER virtual_control_planes_notify
  AFTER UPDATE OF resource_version ON virtual_control_planes
  FOR EACH ROW EXECUTE FUNCTION septa_notify_virtual_objects();
