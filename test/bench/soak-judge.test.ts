import t from 'tap'
import { judge, type Sample } from '../../bench/soak-judge.js'

function samples (count: number, grow: Partial<Record<keyof Sample, number>> = {}): Sample[] {
  return Array.from({ length: count }, (_, index) => ({
    minute: index + 1,
    requestsPerSecond: 2000,
    p99Ms: 20 + (grow.p99Ms ?? 0) * index,
    rssMiB: 200 + (index % 2) * 8 + (grow.rssMiB ?? 0) * index,
    heapMiB: 60 + (index % 3) * 4 + (grow.heapMiB ?? 0) * index,
    eventLoopP99Ms: 12 + (grow.eventLoopP99Ms ?? 0) * index,
    descriptors: 40 + (grow.descriptors ?? 0) * index
  }))
}

const grown = (verdicts: ReturnType<typeof judge>): string[] =>
  verdicts.filter(verdict => verdict.grew).map(verdict => verdict.measure)

t.test('flat curves with the noise of collections pass', async t => {
  t.same(grown(judge(samples(30), 2)), [])
})

t.test('steady growth fails the measure that grew, and only it', async t => {
  t.same(grown(judge(samples(30, { rssMiB: 3 }), 2)), ['rssMiB'], '3 MiB a minute')
  t.same(grown(judge(samples(30, { heapMiB: 2 }), 2)), ['heapMiB'])
  t.same(grown(judge(samples(30, { descriptors: 1 }), 2)), ['descriptors'], 'a descriptor a minute')
  t.same(grown(judge(samples(30, { p99Ms: 4 }), 2)), ['p99Ms'])
  t.same(grown(judge(samples(30, { eventLoopP99Ms: 4 }), 2)), ['eventLoopP99Ms'])
  t.same(grown(judge(samples(30, { p99Ms: 1 }), 2)), [], 'a drift within noise (+20 ms over the run) is not growth')
})

t.test('the warm-up is left out, but a run too short for it is judged whole', async t => {
  const warming = samples(12)
  warming[0] = { ...warming[0] as Sample, rssMiB: 20 }
  warming[1] = { ...warming[1] as Sample, rssMiB: 40 }
  t.same(grown(judge(warming, 2)), [], 'memory filling during the warm-up is not growth')
  t.same(grown(judge(samples(3, { rssMiB: 40 }), 2)), ['rssMiB'])
})
