"""The compiled fast path: N games as one int array (``table``), their observations and masks
(``observe``), stepped in machine code. The AEC env is N = 1; the vector env N games."""
