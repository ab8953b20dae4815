import { Writable } from 'node:stream'
import type { ServerResponse } from 'node:http'
import type { Test } from 'tap'
import type { App } from '../../../src/app.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET } from '../../fixtures/fake-pluggy.js'
import { sendJson, type FakeServer } from '../../fixtures/fake-server.js'
import { pluggyItem } from '../../fixtures/pluggy-shapes.js'

/** Helpers shared by the webhook verification suites. */

export const credentials = { AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID, AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET }
/** Retries and looks at the queue every few milliseconds, so the suites need not wait seconds. */
export const quickRetries = { AGGREGATOR_VERIFY_RETRY_MS: '20', JOB_POLL_MS: '10' }

/** Waits for a state by polling it (generously: a busy machine is slow, never wrong). */
export async function waitFor (
  t: Test, what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) {
      t.fail(`timed out waiting for ${what}`)
      throw new Error(`timed out waiting for ${what}`)
    }
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

/** The service's log lines, parsed, for `buildTestApp`'s server options. */
type LogLine = Record<string, unknown>

export function captureLog (): { lines: LogLine[], logger: { level: string, stream: Writable } } {
  const lines: LogLine[] = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine)
      done()
    }
  })
  return { lines, logger: { level: 'info', stream } }
}

/** `GET /items/{id}` calls the fake received. */
export const lookups = (fake: FakeServer, itemId: string): number =>
  fake.received.filter(r => r.path === `/items/${itemId}`).length

/** An item lookup that answers each call in turn from `answers`, the last one from then on. */
export function answersInTurn (...answers: Array<(res: ServerResponse) => void | Promise<void>>) {
  let calls = 0
  return async (_request: unknown, res: ServerResponse): Promise<void> => {
    const answer = answers[Math.min(calls++, answers.length - 1)]
    if (answer !== undefined) await answer(res)
  }
}

export const fails = (status = 500) => (res: ServerResponse) => {
  sendJson(res, status, { code: status, message: 'down' })
}
/** A whole Item as Pluggy answers it (pluggy-shapes.ts). */
export const item = (id: string, status = 'UPDATED', clientUserId: string | null = 'client-1') =>
  (res: ServerResponse) => { sendJson(res, 200, pluggyItem(id, { status, clientUserId })) }

export async function webhook (
  app: App, itemId: string, event = 'item/updated', eventId = `${itemId}-${event}`
): Promise<unknown> {
  const res = await app.inject({ method: 'POST', url: '/aggregator/webhook', payload: { event, eventId, itemId } })
  return res.json()
}
