/** Small text formats shared by the commands. */

/**
 * An age as kubectl prints it (apimachinery's `duration.HumanDuration`):
 * `45s`, `3m20s`, `42m`, `5h12m`, `30h`, `3d4h`, `120d`, `2y30d`, `9y`.
 */
export function humanAge(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const years = Math.floor(hours / 24 / 365);
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${years}y`;
}

/** The age of an RFC 3339 timestamp at `now`; `-` when there is none. */
export function ageOf(timestamp: string | undefined, now = Date.now()): string {
  if (!timestamp) return '-';
  const at = Date.parse(timestamp);
  return Number.isNaN(at) ? '-' : humanAge(now - at);
}

/**
 * A revision short enough for a column: every hash in it cut to 12 hex digits
 * (`sha256:0123456789ab`, `main@sha1:0123456789ab`); other revisions as they are.
 */
export function shortRevision(revision: string | undefined): string {
  if (!revision) return '-';
  return revision.replace(/\b(sha1|sha256|sha384|sha512):([0-9a-f]{12})[0-9a-f]+/g, '$1:$2');
}
