import t from 'tap'
import { retryAfterSecondsOf } from '../../src/upstream/client.js'

t.test('Retry-After is read as seconds or as a date, and nothing else', async t => {
  const now = Date.parse('2026-03-01T10:00:00.000Z')
  const read = (value?: string): number | undefined =>
    retryAfterSecondsOf(value === undefined ? {} : { 'retry-after': value }, now)
  t.equal(read('60'), 60)
  t.equal(read(' 7 '), 7, 'around spaces')
  t.equal(read('0'), 0)
  t.equal(read('Sun, 01 Mar 2026 10:01:30 GMT'), 90, 'an HTTP date, from now')
  t.equal(read('Sun, 01 Mar 2026 09:00:00 GMT'), 0, 'a date past is now')
  for (const value of [undefined, '', 'soon', '-5', '1.5', '9999999999999', 'Xyz, 99 Abc 2026 99:99:99 GMT']) {
    t.equal(read(value), undefined, JSON.stringify(value))
  }
})
