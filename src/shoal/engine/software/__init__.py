"""Software deployments on a cluster's nodes (issue 11): deciding what is due, running it as
NODE_DEPLOY actions, and recording how each run ended."""
