"""Plain building blocks every layer shares: calendar months, exact rounding, the feed definitions, the checkpoint codec."""
