"""Test doubles shipped for host authors: a fake Messages API and a scripted fake CLI."""
