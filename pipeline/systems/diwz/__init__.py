"""The German DiWZ: rules, finish order, compiled kernel and plain reference."""
