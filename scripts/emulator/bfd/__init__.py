"""BFD on a fabric's switch links: the interval policy by fabric size
(``policy``, pure) and the sessions on running switches (``sessions``)."""
