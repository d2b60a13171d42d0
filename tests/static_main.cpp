// The compile-only tests are static_asserts in tests/static/*.cpp: reaching main means they held.
int main() { return 0; }
