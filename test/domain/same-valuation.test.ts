import t from 'tap'
import { fieldsOf } from '../../src/schemas/common.js'
import { sameValuation, valuate } from '../../src/domain/portfolio-valuation.js'
import { PortfolioValuationSchema, type PortfolioValuation } from '../../src/schemas/valuation.js'

// A live stream sends a valuation only when it differs from the last one sent (sameValuation): a field of
// PortfolioValuationSchema the check did not compare would never reach a stream on its own.

/** A valuation with a value of each type its fields take: numbers, texts, a quote time and unquoted symbols. */
const valuation: PortfolioValuation = {
  ...valuate('p1', [], { get: () => undefined, source: 'brapi.dev' }, new Date('2026-02-01T00:00:00.000Z')),
  quotedAt: '2026-01-01T00:00:00.000Z',
  quoteSource: 'brapi.dev',
  unquotedSymbols: ['C', 'Z']
}

/** Another value of the same type as `value`. */
function other (value: unknown): unknown {
  if (typeof value === 'number') return value + 1
  if (typeof value === 'string') return `${value}-other`
  if (value === null) return '2026-03-01T00:00:00.000Z'
  if (Array.isArray(value)) return [...value, 'other']
  throw new Error(`no other value of ${JSON.stringify(value)}: add its type here`)
}

t.test('a valuation differs from another in any field of its schema but when it was computed', async t => {
  t.same(Object.keys(valuation), fieldsOf(PortfolioValuationSchema), 'the example has every field of the schema')
  for (const field of fieldsOf(PortfolioValuationSchema)) {
    const changed = { ...valuation, [field]: other(valuation[field]) } as PortfolioValuation
    if (field === 'updatedAt') t.ok(sameValuation(valuation, changed), 'updatedAt alone: the same valuation')
    else t.notOk(sameValuation(valuation, changed), `${field} changed: another valuation`)
  }
  t.notOk(sameValuation(undefined, valuation), 'none sent yet')
  t.notOk(sameValuation({ ...valuation, quotedAt: null }, valuation), 'a quote time where there was none')
  t.notOk(sameValuation({ ...valuation, unquotedSymbols: ['C', 'Y'] }, valuation), 'another symbol, as many')
  t.ok(sameValuation({ ...valuation, unquotedSymbols: ['C', 'Z'] }, valuation), 'the same symbols in another array')
  t.ok(sameValuation({ ...valuation, result: -0 }, { ...valuation, result: 0 }), '-0 and 0 both answer 0')
})
