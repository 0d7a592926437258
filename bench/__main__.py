"""Entry point for `python -m bench` (make bench)."""


def main():
    print("no benchmarks yet")


if __name__ == "__main__":
    main()
