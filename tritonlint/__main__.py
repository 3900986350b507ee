from tritonlint.cli import main

raise SystemExit(main())
