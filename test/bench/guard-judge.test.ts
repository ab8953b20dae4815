import t from 'tap'
import { judgeRatios } from '../../bench/guard-judge.js'

const failedRoutes = (verdicts: ReturnType<typeof judgeRatios>): string[] =>
  verdicts.filter(verdict => verdict.failed).map(verdict => verdict.route)

t.test('a ratio within 15 % of its baseline passes, either way', async t => {
  t.same(failedRoutes(judgeRatios({ jwt: 2.3, read: 1.9 }, { jwt: 2.0, read: 2.0 }, 0.15)), [])
})

t.test('a route 15 % slower or faster than its baseline fails, and only it', async t => {
  t.same(failedRoutes(judgeRatios({ jwt: 2.31, read: 2.0 }, { jwt: 2.0, read: 2.0 }, 0.15)), ['jwt'], 'slower')
  t.same(failedRoutes(judgeRatios({ jwt: 2.0, read: 1.69 }, { jwt: 2.0, read: 2.0 }, 0.15)), ['read'], 'faster')
  const [verdict] = judgeRatios({ jwt: 2.5 }, { jwt: 2.0 }, 0.15)
  t.equal(verdict?.change, 0.25)
  t.same(failedRoutes(judgeRatios({ jwt: Number.NaN }, { jwt: 2.0 }, 0.15)), ['jwt'], 'no measure is no pass')
})

t.test('a route without a committed ratio is an error, not a pass', async t => {
  t.throws(() => judgeRatios({ jwt: 2.0 }, {}, 0.15), /no ratio for jwt/)
  t.throws(() => judgeRatios({ jwt: 2.0 }, { jwt: 0 }, 0.15), /no ratio for jwt/)
})
