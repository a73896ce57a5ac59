"""The contract validator, for tests: :class:`bridge.rpc.schema.contract.ContractValidator`.

It lives with the schema it checks against; this module keeps the name where the
test suites import it. Needs the ``jsonschema`` package (in the ``test`` extra).
"""

from __future__ import annotations

from bridge.rpc.schema.contract import ContractValidator

__all__ = ["ContractValidator"]
