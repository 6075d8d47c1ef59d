-- A change of a tenant's members (services/core/people.h) told to every
-- replica, only if the transaction commits, on septa_revocations as
-- "principal:tenant:<name>" (the payload of
-- services/store/revocation_listener.h, as a tenant's suspension is told in
-- 0015): each replica reads people's memberships again at their next
-- request instead of after its cache's few seconds, so a member removed or
-- made a viewer loses the access at once on every replica.
CREATE FUNCTION septa_notify_tenant_members() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('septa_revocations', 'principal:tenant:' || OLD.tenant);
  ELSE
    PERFORM pg_notify('septa_revocations', 'principal:tenant:' || NEW.tenant);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER tenant_members_notify
  AFTER INSERT OR UPDATE OR DELETE ON tenant_members
  FOR EACH ROW
  EXECUTE FUNCTION septa_notify_tenant_members();
