import { GraphQLError, Lexer, Source, TokenKind } from 'graphql'
import { MAX_QUERY_DEPTH, QueryRefusedError } from './errors.js'

/**
 * Brackets (`{`, `[`, `(`) a document may nest before it is refused unparsed. GraphQL's parser
 * recurses once per level and overflows the stack near 2 000; a document within the depth
 * limit nests far less (ten selection levels, inline fragments and input objects included).
 */
export const MAX_DOCUMENT_NESTING = 64

/** What a document's text may be, checked before it is parsed. */
export interface DocumentLimits {
  /** UTF-8 bytes of the text (`GRAPHQL_MAX_DOCUMENT_BYTES`). */
  maxBytes: number
  /** Lexical tokens (names, punctuation, values; comments are not tokens). */
  maxTokens: number
}

/** The limits for a byte limit: at most one token for every two bytes it allows. */
export function documentLimits (maxBytes: number): DocumentLimits {
  return { maxBytes, maxTokens: Math.ceil(maxBytes / 2) }
}

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L])
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R])

/**
 * Refuses, before any parsing, a document longer than the byte limit, with more tokens than the
 * token limit, or nested deeper than the parser can take: one pass of GraphQL's lexer (which
 * does not recurse), stopped at the first limit crossed. A lexical error is left to the parser,
 * which reports it in its own words.
 */
export function assertDocumentWithinLimits (source: string, limits: DocumentLimits): void {
  // A UTF-8 character takes at most 3 bytes per UTF-16 unit: most texts need no byte count.
  const bytes = source.length * 3 <= limits.maxBytes ? source.length : Buffer.byteLength(source, 'utf8')
  if (bytes > limits.maxBytes) {
    const message = `document of ${bytes} bytes exceeds the limit of ${limits.maxBytes} bytes`
    throw new QueryRefusedError(message, { maxBytes: limits.maxBytes })
  }
  const lexer = new Lexer(new Source(source))
  let tokens = 0
  let nesting = 0
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (++tokens > limits.maxTokens) {
        const message = `document exceeds the limit of ${limits.maxTokens} tokens`
        throw new QueryRefusedError(message, { maxTokens: limits.maxTokens })
      }
      if (OPENING.has(token.kind) && ++nesting > MAX_DOCUMENT_NESTING) {
        const message = `query depth (over ${MAX_DOCUMENT_NESTING} nested levels) exceeds ` +
          `the query depth limit of ${MAX_QUERY_DEPTH}`
        throw new QueryRefusedError(message, { maxDepth: MAX_QUERY_DEPTH })
      }
      if (CLOSING.has(token.kind)) nesting--
    }
  } catch (error) {
    if (error instanceof QueryRefusedError || !(error instanceof GraphQLError)) throw error
  }
}

/** Texts remembered as within the limits (a document is usually sent many times). */
const REMEMBERED_DOCUMENTS = 1024

/** `assertDocumentWithinLimits` for one instance's requests: a text that passed is not lexed again. */
export class DocumentGuard {
  private readonly accepted = new Set<string>()

  constructor (private readonly limits: DocumentLimits) {}

  assert (source: string): void {
    if (this.accepted.has(source)) return
    assertDocumentWithinLimits(source, this.limits)
    if (this.accepted.size >= REMEMBERED_DOCUMENTS) this.accepted.clear()
    this.accepted.add(source)
  }
}
