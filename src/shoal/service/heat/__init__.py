"""The orchestration (Heat v1) façade's service layer: Heat's requests translated into Shoal's.

A stack is a cluster made from the HOT template, environment and files by Shoal's HOT reader
(`documents/hot`); Heat's statuses and events are read from Shoal's actions; Heat's standalone
software configs and deployments are kept as given. The core never imports this package.
"""
