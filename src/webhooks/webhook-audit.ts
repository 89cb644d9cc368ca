/**
 * A webhook URL as the audit trail keeps it: without its query string (or fragment), where a receiver's
 * token would sit; audit events are kept for a year (AUDIT_RETENTION_DAYS), webhooks are not.
 */
export function urlForAudit(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.search === '' && parsed.hash === '') return url;
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString();
  } catch {
    return url.split(/[?#]/, 1)[0];
  }
}

/** What the audit trail records of a webhook: never the secret, and the URL without its query string. */
export const auditView = (row: { url: string; types: string[]; enabled: boolean }) => ({
  url: urlForAudit(row.url),
  types: row.types,
  enabled: row.enabled,
});
