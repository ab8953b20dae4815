import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomDevSecrets, type DevSecrets } from './config.js'

/**
 * Development secrets live in `<dir>/dev-secrets.json`, made once with random values, so that
 * the server and `npm run token` agree without any setup. Never used in production.
 */
export function loadOrCreateDevSecrets (dir: string): DevSecrets {
  const file = join(dir, 'dev-secrets.json')
  try {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as Partial<DevSecrets>
    if (typeof stored.jwtSecret === 'string' && typeof stored.apiKey === 'string') {
      return { jwtSecret: stored.jwtSecret, apiKey: stored.apiKey }
    }
  } catch {
    // Missing or unreadable: make new ones below.
  }
  const secrets = randomDevSecrets()
  mkdirSync(dir, { recursive: true })
  writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 })
  return secrets
}
