"""The club "Rankings Explained" rating: rules, compiled kernel and plain reference."""
