"""Rendering: turning batches and findings into tables, JSON and Kafka's dump-log lines."""
