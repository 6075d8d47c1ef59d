-- One host namespace per virtual cluster (../shared/docs/HOSTILE-TENANT-FINDINGS.md
-- M2: the old name function gave two virtual clusters of one tenant the same
-- namespace, so each ran in the other's and deleting one deleted both's pods).
--
-- host_namespace is now given when the row is inserted (the create use case,
-- tenancy/host/names.h HostNamespaceName) and never derived again; this
-- index refuses a second row with it, and the create answers 409 naming the
-- virtual cluster's name. '' is a row of an older septad that the provisioner
-- has not looked at yet; it records the name before its first host write.
--
-- on_host: the provisioner may have written to the host for the row (it sets
-- this before its first write), so deleting it goes through DELETING; a row
-- that never was on the host is deleted at once. Until now a non-empty
-- host_namespace said so.
ALTER TABLE virtual_clusters ADD COLUMN on_host boolean NOT NULL DEFAULT false;
UPDATE virtual_clusters SET on_host = true WHERE host_namespace <> '';

-- Rows that share a namespace already cannot be told apart here: the host's
-- namespace holds both virtual clusters' pods, and which of them keeps it is
-- the operator's choice. The migration refuses, naming them, and septad does
-- not start until all but one of each are deleted (with the septad before
-- this one).
DO $$
DECLARE
  shared text;
BEGIN
  SELECT string_agg(host_namespace || ' is the host namespace of ' || holders, '; ' ORDER BY host_namespace)
    INTO shared
    FROM (SELECT host_namespace, string_agg(tenant || '/' || name, ' and ' ORDER BY tenant, name) AS holders
            FROM virtual_clusters
           WHERE host_namespace <> ''
           GROUP BY host_namespace
          HAVING count(*) > 1) AS duplicates;
  IF shared IS NOT NULL THEN
    RAISE EXCEPTION 'virtual clusters share a host namespace: %. Their workloads run in one namespace; keep one '
                    'of each: delete the others with the septad of before this migration, then start this one again',
                    shared;
  END IF;
END
$$;

CREATE UNIQUE INDEX virtual_clusters_host_namespace_key ON virtual_clusters (host_namespace)
  WHERE host_namespace <> '';
