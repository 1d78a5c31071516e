/**
 * The value of a role claim in the claims bucket (ROLE_CLAIMS_BUCKET), and the reply of a
 * claim probe (claimProbeSubject): who holds the role, where, since when.
 */
export interface RoleClaim {
  node_id: string;
  /** The holder's hostname, so an operator knows where to look. */
  host: string;
  /** Fresh at every start of the holder: tells a restarted node from its earlier run. */
  instance: string;
  version: string;
  /** RFC 3339: when this holder took the role. */
  since: string;
}
