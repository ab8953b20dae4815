import t from 'tap'
import { readFileSync } from 'node:fs'
import { MINIMUM_NODE_MAJOR, unsupportedNodeMessage } from '../src/supported-node.js'

t.test('a Node.js older than package.json\'s engines gets one line: what it needs, its version and path', async t => {
  const manifest = readFileSync(new URL('../package.json', import.meta.url), 'utf8')
  const pkg = JSON.parse(manifest) as { engines: { node: string } }
  t.equal(pkg.engines.node, `>=${MINIMUM_NODE_MAJOR}`, 'the check and the engines field say the same')
  const line = unsupportedNodeMessage('v20.20.2', '/usr/bin/node')
  t.match(line, /^bff-service needs Node\.js 22 or newer; this is Node\.js v20\.20\.2 \(\/usr\/bin\/node\)\. /)
  t.notMatch(line, '\n', 'one line')
  t.equal(unsupportedNodeMessage('v18.0.0', 'node')?.startsWith('bff-service needs Node.js 22'), true)
  t.equal(unsupportedNodeMessage('v22.0.0', 'node'), undefined)
  t.equal(unsupportedNodeMessage('v24.21.0', 'node'), undefined)
  t.equal(unsupportedNodeMessage(process.version, process.execPath), undefined, 'the Node running the tests passes')
})
