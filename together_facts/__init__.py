"""What every layer shares and no layer owns: Together's values, prices and node packing, the one
error tree with its fix hints, and the resend rule. Pure: no HTTP, no pydantic, no Pulumi."""
