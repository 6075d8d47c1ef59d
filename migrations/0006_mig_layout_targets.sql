-- MIG layout targets (tenancy/mig_relayout.h): a GPU that is being re-laid
-- out for a reservation of instances its current layout does not have. The
-- row is written in the same transaction as that reservation; while it
-- exists the placement engine sees the GPU with its target layout, and the
-- MIG layout controller (services/reconcile/mig_layout_controller.h) applies
-- it through the node's `nvidia.com/mig.config` label, then deletes it (on
-- success) or rolls the reservations on it back (on failure).
CREATE TABLE mig_layout_targets (
  node         text COLLATE "C" NOT NULL,
  gpu          integer NOT NULL,
  -- [[profile index in the model's catalog entry, start slice], ...] in creation order
  layout       jsonb NOT NULL CONSTRAINT mig_layout_targets_layout_array CHECK (jsonb_typeof(layout) = 'array'),
  -- The node's mig-parted config that gives it; every target of a node names the same one.
  mig_config   text NOT NULL
               CONSTRAINT mig_layout_targets_mig_config_label
               CHECK (mig_config ~ '^[A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?$' AND length(mig_config) <= 63),
  requested_at timestamptz NOT NULL,
  CONSTRAINT mig_layout_targets_pkey PRIMARY KEY (node, gpu),
  CONSTRAINT mig_layout_targets_gpu_fkey FOREIGN KEY (node, gpu)
    REFERENCES inventory_gpus (node, index) ON DELETE CASCADE
);

-- A target changes what the engine places on: it moves the capacity epoch (0004).
CREATE TRIGGER mig_layout_targets_epoch AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON mig_layout_targets
  FOR EACH STATEMENT EXECUTE FUNCTION septa_bump_capacity_epoch();

-- Tells the MIG layout controllers which node's targets changed.
CREATE FUNCTION septa_notify_mig_layout_target() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('septa_mig_layout_targets', CASE TG_OP WHEN 'DELETE' THEN OLD.node ELSE NEW.node END);
  RETURN NULL;
END $$;

CREATE TRIGGER mig_layout_targets_notify AFTER INSERT OR UPDATE OR DELETE ON mig_layout_targets
  FOR EACH ROW EXECUTE FUNCTION septa_notify_mig_layout_target();
