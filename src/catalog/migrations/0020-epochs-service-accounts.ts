/**
 * An account whose micro services were gathered and came back empty folds no rows at all,
 * the same as an account that was not asked or whose gathering failed: service-002 (a
 * service gone) must tell them apart, so each epoch names the accounts it has a services
 * reply for.
 */
export const migration = {
  version: 20,
  name: "epochs record the accounts whose micro services were gathered",
  sql: [
    "ALTER TABLE hx.epochs ADD COLUMN service_accounts VARCHAR[];",
    "COMMENT ON COLUMN hx.epochs.service_accounts IS 'Accounts whose micro services ($SRV.INFO / $SRV.STATS) were gathered this epoch, sorted, also when none answered; an account missing here was not asked or could not be. NULL for epochs folded before this column.';",
  ].join("\n"),
};
