import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const FIXTURE = fileURLToPath(new URL('../fixtures/log-lines.ts', import.meta.url))

async function linesOf (mode: string): Promise<{ code: number, numbers: number[] }> {
  return await new Promise(resolve => {
    execFile(process.execPath, ['--import', 'tsx', FIXTURE, mode], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      const numbers = stdout.split('\n').filter(Boolean).map(text => (JSON.parse(text) as { n: number }).n)
      resolve({ code: typeof error?.code === 'number' ? error.code : 0, numbers })
    })
  })
}

const EVERY_LINE = Array.from({ length: 5000 }, (_, n) => n)

t.test('lines written over many turns all arrive, whole and in order', async t => {
  const { code, numbers } = await linesOf('turns')
  t.equal(code, 0)
  t.same(numbers, EVERY_LINE)
})

t.test('lines of the turn that calls process.exit are not lost', async t => {
  const { code, numbers } = await linesOf('exit')
  t.equal(code, 0)
  t.same(numbers, EVERY_LINE)
})

t.test('lines written just before an uncaught error are not lost', async t => {
  const { code, numbers } = await linesOf('throw')
  t.equal(code, 1)
  t.same(numbers, EVERY_LINE)
})
