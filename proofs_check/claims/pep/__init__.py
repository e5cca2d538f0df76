"""Claims checked against exact worst cases (``proofs_check.pep``): a theorem's bound against the worst
case of its method over the whole function class it covers, solved as a performance-estimation SDP."""
