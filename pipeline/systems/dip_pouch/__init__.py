"""The Dip Pouch Tournament Rating: rules and plain reference."""
