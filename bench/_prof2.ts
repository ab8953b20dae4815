import { spawn } from 'node:child_process'
import { once } from 'node:events'
import autocannon from 'autocannon'
import { mintToken } from '../src/tokens.js'
import { providerConfig } from '../src/plugins/auth.js'
const target = process.argv[2] ?? '/auth/health'
const svc = spawn('taskset', ['-c', '0', process.execPath, '--cpu-prof', '--cpu-prof-dir=/tmp/prof2', 'dist/server.js'], { env: { ...process.env, NODE_ENV: 'production', PORT: '3996', LOG_LEVEL: 'warn', JWT_SECRET: 'bench-secret-bench-secret-bench-secret', API_KEYS: 'k', DATABASE_URL: 'sqlite::memory:', RATE_LIMIT_MAX: '1000000000' }, stdio: 'inherit' })
await new Promise(r => setTimeout(r, 1500))
const token = mintToken({ secret: 'bench-secret-bench-secret-bench-secret', algorithm: 'HS256', providers: providerConfig({ user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' }), type: 'user', sub: 1, issuer: 'http://x/api/login', ttlSeconds: 3600 })
const r = await autocannon({ url: 'http://127.0.0.1:3996' + target, duration: 5, connections: 10, headers: { authorization: `Bearer ${token}` } })
console.log('req/s', r.requests.average)
const status = (await import('node:fs')).readFileSync(`/proc/${svc.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/)?.[1]
console.log('peak rss MB', Number(status) / 1024)
svc.kill('SIGINT')
await once(svc, 'exit')
