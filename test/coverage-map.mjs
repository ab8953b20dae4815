// tap's coverage map. Most slow suites start real service processes through tsx (or a build of the
// service); tap follows them into those children, whose differently compiled copies of src/ do not
// merge with the in-process coverage, so they are not counted (null): the other suites cover src/ in
// process. The slow suites below are slow for Chromium, tsc or servers that are not Node (Redis,
// PgBouncer) only; they run the service in process and count like any other suite.
const IN_PROCESS_SLOW = [
  'test/plugins/browser.slow.test.ts',
  'test/plugins/docs-browser.slow.test.ts',
  'test/plugins/openapi-client.slow.test.ts',
  'test/plugins/openapi-lint.slow.test.ts',
  'test/modules/graphql/graphiql-browser.slow.test.ts',
  'test/modules/graphql/client.slow.test.ts',
  'test/modules/graphql/subscriptions-browser.slow.test.ts',
  'test/faults/redis.slow.test.ts',
  'test/faults/upstream.slow.test.ts',
  'test/faults/read-cache-instances.slow.test.ts',
  'test/faults/pooler.slow.test.ts',
  'test/faults/simultaneous-start.slow.test.ts'
]

export default testFile =>
  /\.slow\.test\.ts$/.test(testFile) && !IN_PROCESS_SLOW.some(name => testFile.endsWith(name)) ? null : []
