from benchmarks.debias.run import main

main()
