"""Workflow steps that combine several modules (one function per rule)."""
