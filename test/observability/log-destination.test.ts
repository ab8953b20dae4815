import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const FIXTURE = fileURLToPath(new URL('../fixtures/log-lines.ts', import.meta.url))

function numbersOf (stdout: string): number[] {
  return stdout.split('\n').filter(Boolean).map(text => {
    const line = JSON.parse(text) as { n: number, text: string }
    if (line.text !== 'ação ✓') throw new Error(`line ${line.n} garbled`)
    return line.n
  })
}

async function linesOf (mode: string): Promise<{ code: number, numbers: number[] }> {
  return await new Promise(resolve => {
    execFile(process.execPath, ['--import', 'tsx', FIXTURE, mode], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      resolve({ code: typeof error?.code === 'number' ? error.code : 0, numbers: numbersOf(stdout) })
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

for (const [mode, name] of [
  ['full-pipe', 'a full non-blocking pipe delays lines, never loses or reorders them'],
  ['full-pipe-exit', 'an exit while lines wait out a full pipe writes them all, whole and in order']
]) {
  t.test(name as string, async t => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, mode as string], {
      stdio: ['ignore', 'pipe', 'pipe']
    })
    // Nothing is read until the child has written its lines: the pipe fills (64 KiB) and its writes meet EAGAIN.
    child.stdout.pause()
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += String(chunk)
      if (stderr.includes('written')) child.stdout.resume()
    })
    const chunks: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    const [code] = await once(child, 'close') as [number]
    t.equal(code, 0)
    t.same(numbersOf(Buffer.concat(chunks).toString('utf8')), EVERY_LINE)
  })
}

t.test('a closed standard output ends the process, as an unwritable destination did', async t => {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, 'turns'], { stdio: ['ignore', 'pipe', 'ignore'] })
  child.stdout.destroy()
  const [code] = await once(child, 'exit') as [number | null]
  t.not(code, 0)
})
