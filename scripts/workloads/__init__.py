"""Traffic workloads shared by the experiments of both backends and the LetFlow simulator."""
