"""The machinery every resource kind shares, so a kind's package declares only what is its own
(its modules are listed in CONTRIBUTING.md "Where things live")."""
