-- Drift policies of GitOps apply sets (services/core/apply_set_guard.h) and
-- the audit facts that name a drift: where the request came in, and an
-- admin's reason for breaking the glass of a locked set.
--
-- on_drift says what a write outside the set to a field it owns does:
-- 'report' (it is shown as drift until the next apply), 'revert' (the
-- apply set controller applies the set's last intent again at once) or
-- 'lock' (it is refused unless an admin breaks glass with a reason).
-- protected_kinds: kinds pruned only when confirmed by name, beyond trust
-- tiers and tenants, which always are.
ALTER TABLE apply_sets
  ADD COLUMN on_drift text NOT NULL DEFAULT 'report'
             CONSTRAINT apply_sets_on_drift_known CHECK (on_drift IN ('report', 'revert', 'lock')),
  ADD COLUMN protected_kinds text[] NOT NULL DEFAULT '{}';

-- The member's declaration as the API received it (a septa.v1.ApplyObject,
-- without its source), which a revert applies again.
ALTER TABLE apply_set_members ADD COLUMN intent bytea NOT NULL DEFAULT '';

-- surface: 'rest', 'portal', 'grpc', 'septactl' or 'system' (septad
-- itself); '' for records written before this migration. detail: what an
-- action adds in words (a drift's write and owned fields, an admin's
-- break-glass reason).
ALTER TABLE audit_log
  ADD COLUMN surface text NOT NULL DEFAULT '',
  ADD COLUMN detail text NOT NULL DEFAULT '';
