import type { AssetType } from '../schemas/asset.js'

export interface DemoLot {
  /** Bought this many months before the store was seeded. */
  monthsAgo: number
  quantity: number
  price: number
}

export interface DemoAsset {
  name: string
  symbol: string
  type: AssetType
  /** The last known unit price; the quantity is the sum of the lots. */
  price: number
  lots: DemoLot[]
}

export interface DemoPortfolio {
  name: string
  description: string
  userId: string
  assets: DemoAsset[]
}

/**
 * Demo portfolios for users "1" and "2" (`npm run token` mints sub "1"), with Brazilian
 * assets of every type and buys spread over the last two years, so dashboards have a history.
 * Loaded on the first start of an empty development store and by /reset.
 */
export const DEMO_PORTFOLIOS: readonly DemoPortfolio[] = [
  {
    name: 'Carteira Principal',
    description: 'Ações e renda fixa de longo prazo',
    userId: '1',
    assets: [
      {
        name: 'Petrobras PN',
        symbol: 'PETR4',
        type: 'STOCK',
        price: 37.42,
        lots: [
          { monthsAgo: 18, quantity: 100, price: 31.2 },
          { monthsAgo: 6, quantity: 100, price: 36.9 }
        ]
      },
      {
        name: 'Vale ON',
        symbol: 'VALE3',
        type: 'STOCK',
        price: 61.18,
        lots: [{ monthsAgo: 14, quantity: 150, price: 68.4 }]
      },
      {
        name: 'Itaú Unibanco PN',
        symbol: 'ITUB4',
        type: 'STOCK',
        price: 33.05,
        lots: [
          { monthsAgo: 20, quantity: 200, price: 26.7 },
          { monthsAgo: 3, quantity: 100, price: 32.1 }
        ]
      },
      {
        name: 'Tesouro IPCA+ 2035',
        symbol: 'IPCA35',
        type: 'BOND',
        price: 2280.9,
        lots: [{ monthsAgo: 12, quantity: 2.5, price: 2105.3 }]
      },
      {
        name: 'CSHG Logística FII',
        symbol: 'HGLG11',
        type: 'FUND',
        price: 158.3,
        lots: [{ monthsAgo: 9, quantity: 40, price: 162.4 }]
      }
    ]
  },
  {
    name: 'Reserva Alternativa',
    description: 'Cripto e ouro',
    userId: '1',
    assets: [
      {
        name: 'Bitcoin',
        symbol: 'BTC',
        type: 'CRYPTO',
        price: 352_000,
        lots: [
          { monthsAgo: 10, quantity: 0.03, price: 310_000 },
          { monthsAgo: 2, quantity: 0.02, price: 345_000 }
        ]
      },
      {
        name: 'Ouro (grama)',
        symbol: 'GOLD',
        type: 'COMMODITY',
        price: 412.5,
        lots: [{ monthsAgo: 15, quantity: 25, price: 338.9 }]
      },
      {
        name: 'Apple Inc. (em dólares)',
        symbol: 'AAPL',
        type: 'STOCK',
        price: 1219.6,
        lots: [{ monthsAgo: 7, quantity: 4, price: 1150.4 }]
      }
    ]
  },
  {
    name: 'Aposentadoria',
    description: 'Índice e Tesouro Selic',
    userId: '2',
    assets: [
      {
        name: 'iShares Ibovespa',
        symbol: 'BOVA11',
        type: 'FUND',
        price: 128.7,
        lots: [
          { monthsAgo: 24, quantity: 60, price: 112.5 },
          { monthsAgo: 12, quantity: 60, price: 121.3 }
        ]
      },
      {
        name: 'Tesouro Selic 2029',
        symbol: 'SELIC29',
        type: 'BOND',
        price: 15_120.44,
        lots: [{ monthsAgo: 8, quantity: 1.2, price: 14_480.1 }]
      },
      {
        name: 'Ethereum',
        symbol: 'ETH',
        type: 'CRYPTO',
        price: 13_900,
        lots: [{ monthsAgo: 5, quantity: 0.8, price: 15_250 }]
      },
      {
        name: 'Banco do Brasil ON',
        symbol: 'BBAS3',
        type: 'STOCK',
        price: 27.9,
        lots: [{ monthsAgo: 4, quantity: 100, price: 28.6 }]
      }
    ]
  }
]
