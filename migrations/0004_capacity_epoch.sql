-- The capacity epoch: one number that moves with every change to the GPU
-- inventory or to reservations. Each septad keeps its placement engine as a
-- cache of those rows (services/core/capacity_ledger.h) and rebuilds it when
-- the epoch it read in a reserving transaction is not the one the cache was
-- built at. The statement-level triggers below bump it inside the changing
-- transaction, so a SERIALIZABLE reserver that read it and a concurrent
-- change cannot both commit: one of them is retried.
CREATE TABLE capacity_epoch (
  singleton boolean PRIMARY KEY DEFAULT true CONSTRAINT capacity_epoch_singleton CHECK (singleton),
  epoch     bigint NOT NULL
);
INSERT INTO capacity_epoch (singleton, epoch) VALUES (true, 1);

CREATE FUNCTION septa_bump_capacity_epoch() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  UPDATE capacity_epoch SET epoch = epoch + 1;
  RETURN NULL;
END
$$;

CREATE TRIGGER inventory_nodes_epoch AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON inventory_nodes
  FOR EACH STATEMENT EXECUTE FUNCTION septa_bump_capacity_epoch();
CREATE TRIGGER inventory_gpus_epoch AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON inventory_gpus
  FOR EACH STATEMENT EXECUTE FUNCTION septa_bump_capacity_epoch();
CREATE TRIGGER inventory_mig_instances_epoch AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON inventory_mig_instances
  FOR EACH STATEMENT EXECUTE FUNCTION septa_bump_capacity_epoch();
CREATE TRIGGER reservations_epoch AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON reservations
  FOR EACH STATEMENT EXECUTE FUNCTION septa_bump_capacity_epoch();
CREATE TRIGGER reservation_mig_epoch AFTER INSERT OR DELETE OR TRUNCATE ON reservation_mig
  FOR EACH STATEMENT EXECUTE FUNCTION septa_bump_capacity_epoch();
CREATE TRIGGER reservation_gpus_epoch AFTER INSERT OR DELETE OR TRUNCATE ON reservation_gpus
  FOR EACH STATEMENT EXECUTE FUNCTION septa_bump_capacity_epoch();
CREATE TRIGGER reservation_shares_epoch AFTER INSERT OR DELETE OR TRUNCATE ON reservation_shares
  FOR EACH STATEMENT EXECUTE FUNCTION septa_bump_capacity_epoch();
CREATE TRIGGER reservation_nodes_epoch AFTER INSERT OR DELETE OR TRUNCATE ON reservation_nodes
  FOR EACH STATEMENT EXECUTE FUNCTION septa_bump_capacity_epoch();
