/** The bare Fastify baseline of the benchmarks: one JSON route, no plugins, no logger. */
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.get('/', async () => ({ hello: 'world' }))
const address = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`${new URL(address).port}\n`)
process.on('SIGTERM', () => { app.close().then(() => process.exit(0)) })
