/**
 * Whether `DATABASE_URL` (or any store URL) names PostgreSQL: `postgres://` or `postgresql://`;
 * anything else the configuration admits is SQLite (`sqlite:<file>`, `sqlite::memory:`). The one
 * test of it, for the store, the configuration and the start-up summary alike; no imports, so
 * that reading the configuration loads no driver.
 */
export function isPostgresUrl (url: string): boolean {
  return url.startsWith('postgres://') || url.startsWith('postgresql://')
}
