-- The GPU-instance id of each MIG instance (DCGM's GPU_I_ID, NVML's GPU
-- instance id), as the inventory controller observed it. Usage attribution
-- reads dcgm-exporter's series by (node, parent GPU UUID, GPU_I_ID), which
-- show no placement, while reservations hold MIG instances by placement
-- (node, gpu, start): this column maps one to the other. NULL where the node
-- does not tell it (a layout known only from the nvidia.com/mig.config
-- label). The driver numbers a GPU's instances itself, never two alike.
ALTER TABLE inventory_mig_instances
  ADD COLUMN gi_id integer CONSTRAINT inventory_mig_instances_gi_id_nonnegative CHECK (gi_id >= 0),
  ADD CONSTRAINT inventory_mig_instances_gi_id_key UNIQUE (node, gpu, gi_id);
