import type { AssetType } from '../modules/portfolio-assets/schemas.js'

export interface DemoAsset {
  name: string
  symbol: string
  type: AssetType
  quantity: number
  price: number
}

export interface DemoPortfolio {
  name: string
  description: string
  userId: string
  assets: DemoAsset[]
}

/**
 * Demo portfolios for users "1" and "2" (`npm run token` mints sub "1"), with Brazilian
 * assets of every type. Loaded on the first start of an empty development store and by /reset.
 */
export const DEMO_PORTFOLIOS: readonly DemoPortfolio[] = [
  {
    name: 'Carteira Principal',
    description: 'Ações e renda fixa de longo prazo',
    userId: '1',
    assets: [
      { name: 'Petrobras PN', symbol: 'PETR4', type: 'STOCK', quantity: 200, price: 37.42 },
      { name: 'Vale ON', symbol: 'VALE3', type: 'STOCK', quantity: 150, price: 61.18 },
      { name: 'Itaú Unibanco PN', symbol: 'ITUB4', type: 'STOCK', quantity: 300, price: 33.05 },
      { name: 'Tesouro IPCA+ 2035', symbol: 'IPCA35', type: 'BOND', quantity: 2.5, price: 2280.9 },
      { name: 'CSHG Logística FII', symbol: 'HGLG11', type: 'FUND', quantity: 40, price: 158.3 }
    ]
  },
  {
    name: 'Reserva Alternativa',
    description: 'Cripto e ouro',
    userId: '1',
    assets: [
      { name: 'Bitcoin', symbol: 'BTC', type: 'CRYPTO', quantity: 0.05, price: 352_000 },
      { name: 'Ouro (grama)', symbol: 'GOLD', type: 'COMMODITY', quantity: 25, price: 412.5 }
    ]
  },
  {
    name: 'Aposentadoria',
    description: 'Índice e Tesouro Selic',
    userId: '2',
    assets: [
      { name: 'iShares Ibovespa', symbol: 'BOVA11', type: 'FUND', quantity: 120, price: 128.7 },
      { name: 'Tesouro Selic 2029', symbol: 'SELIC29', type: 'BOND', quantity: 1.2, price: 15_120.44 },
      { name: 'Ethereum', symbol: 'ETH', type: 'CRYPTO', quantity: 0.8, price: 13_900 },
      { name: 'Banco do Brasil ON', symbol: 'BBAS3', type: 'STOCK', quantity: 100, price: 27.9 }
    ]
  }
]
