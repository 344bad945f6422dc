extern __thread int x;

int main(int argc, char **argv) {
  return 0;
}
